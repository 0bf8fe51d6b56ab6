class Cart:
    def __init__(self):
        self.items = []

    def addItem(self, name, price):
        self.items.append((name, price))

    def total(self):
        return sum(price for _, price in self.items)
