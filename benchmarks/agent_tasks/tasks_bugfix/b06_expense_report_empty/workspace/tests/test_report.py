from decimal import Decimal

import pytest

from expenses.report import Summary, by_category, read_expenses, report, summarise

EXPORT = """date,category,amount
2024-03-01,Groceries,42.10
2024-03-02,transport,2.90

2024-03-09,groceries,17.35
2024-03-15,Rent,850.00
"""

HEADER = f"{'category':<12}{'count':>6}{'total':>10}{'average':>10}{'largest':>10}"


def test_read_expenses_skips_blank_lines_and_folds_case():
    rows = read_expenses(EXPORT)
    assert len(rows) == 4
    assert rows[2] == ("groceries", Decimal("17.35"))


def test_bad_amount_names_its_line():
    with pytest.raises(ValueError, match="line 3"):
        read_expenses("date,category,amount\n2024-03-01,rent,850\n2024-03-02,bus,two\n")


def test_summarise_rounds_the_average_to_the_cent():
    summary = summarise([Decimal("10.00"), Decimal("10.00"), Decimal("10.01")])
    assert summary == Summary(3, Decimal("30.01"), Decimal("10.00"), Decimal("10.01"))


def test_by_category():
    groceries = by_category(EXPORT)["groceries"]
    assert groceries.count == 2
    assert groceries.total == Decimal("59.45")
    assert list(by_category(EXPORT)) == ["groceries", "rent", "transport"]


def test_report_of_a_month():
    lines = report(EXPORT).splitlines()
    assert lines[0] == HEADER
    assert lines[-1] == f"{'TOTAL':<12}{4:>6}{'912.35':>10}{'228.09':>10}{'850.00':>10}"


def test_summary_of_no_amounts_is_zeros():
    assert summarise([]) == Summary(0, Decimal(0), Decimal(0), Decimal(0))


def test_report_of_a_month_without_expenses():
    zeros = f"{'TOTAL':<12}{0:>6}{'0.00':>10}{'0.00':>10}{'0.00':>10}"
    assert report("date,category,amount\n").splitlines() == [HEADER, zeros]
