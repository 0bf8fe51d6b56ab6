from cart import Cart


def basket():
    cart = Cart()
    cart.addItem("apple", 2)
    cart.addItem("pear", 3)
    return cart.total()
