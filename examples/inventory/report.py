"""Print a stock report."""

from inventory import Item, calc_total


def main():
    items = [Item("pen", 1.5, 10), Item("book", 12.0, 2)]
    print(f"Stock value: {calc_total(items):.2f}")


if __name__ == "__main__":
    main()
