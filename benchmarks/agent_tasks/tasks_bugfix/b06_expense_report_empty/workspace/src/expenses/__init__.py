"""Monthly expense reports from the bank's CSV export."""
