from cart import Cart


def basket():
    cart = Cart()
    cart.add_item("apple", 2)
    cart.add_item("pear", 3)
    return cart.total()
