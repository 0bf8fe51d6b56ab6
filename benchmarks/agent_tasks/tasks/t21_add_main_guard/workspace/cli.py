def main():
    print("running the tool")
    return 0


main()
