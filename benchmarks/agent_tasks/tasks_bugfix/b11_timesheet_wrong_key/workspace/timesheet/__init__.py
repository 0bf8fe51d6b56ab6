"""Timesheet reports from the time tracker's export."""

from timesheet.entries import Entry, load
from timesheet.report import hours_by_client, hours_by_project, invoice_lines

__all__ = ["Entry", "hours_by_client", "hours_by_project", "invoice_lines", "load"]
