from parity import is_even

assert is_even(0)
assert is_even(4)
assert not is_even(7)
print("all checks passed")
