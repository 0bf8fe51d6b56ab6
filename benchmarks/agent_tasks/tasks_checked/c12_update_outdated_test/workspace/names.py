def initials(full_name):
    """The initials of a name, each followed by a dot: "Ada Lovelace" -> "A.L.".

    Changed on purpose in 2.0 (it used to return "AL"); empty parts are ignored.
    """
    return "".join(part[0].upper() + "." for part in full_name.split())
