from pricing import fmt_price


class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, cents):
        self.items.append((name, cents))

    def total_cents(self):
        return sum(cents for _, cents in self.items)

    def summary(self):
        return f"{len(self.items)} items, total {fmt_price(self.total_cents())}"
