def greet(name, greeting="Hello"):
    return greeting + ", " + name + "!"
