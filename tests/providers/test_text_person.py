"""The text edit format's reply as the person reads it: the words, each edit block summarised."""

from __future__ import annotations

from cadenza.providers.text_person import person_text

FENCE = "```"
SR = "<<<<<<< SEARCH\n    return x\n=======\n    return 2 * x\n>>>>>>> REPLACE"


def test_a_search_replace_block_reads_as_the_file_it_edits() -> None:
    reply = f"I double it.\n\nutil.py\n{FENCE}python\n{SR}\n{FENCE}\n\nThat is all."
    assert person_text(reply) == "I double it.\n\n(edited util.py)\n\nThat is all."


def test_whole_files_and_unfenced_sections_read_as_their_files() -> None:
    reply = (
        f"**util.py**\n{FENCE}python\ndef f():\n    return 2\n{FENCE}\n\n"
        f"### app.py\n{FENCE}\nimport util\n{FENCE}\n\nutil.py\n{SR}\n"
    )
    assert person_text(reply) == "(edited util.py)\n\n(edited app.py)\n\n(edited util.py)"
    # Two blocks in a row for one file are said once.
    twice = f"util.py\n{FENCE}\n{SR}\n{FENCE}\nutil.py\n{FENCE}\n{SR}\n{FENCE}\nDone."
    assert person_text(twice) == "(edited util.py)\nDone."


def test_tool_blocks_unreadable_blocks_and_copied_result_heads_are_dropped() -> None:
    tool = '{"name": "read_file", "arguments": {"path": "util.py"}}'
    reply = (
        f"[block for util.py: result]\noverwrote util.py (20 characters)\n\n"
        f"Let me check it.\n{FENCE}tool\n{tool}\n{FENCE}\n[read_file error]\n"
        f"{FENCE}\n{SR}\n{FENCE}\n"  # a SEARCH/REPLACE block that names no file: nothing done
    )
    assert person_text(reply) == "overwrote util.py (20 characters)\n\nLet me check it."


def test_prose_and_examples_stay_as_written() -> None:
    reply = f"Run it with:\n\n{FENCE}bash\npython -m app\n{FENCE}\n\nIt prints [1, 2]."
    assert person_text(reply) == reply
    assert person_text("Done.\r\nNothing else.") == "Done.\nNothing else."
