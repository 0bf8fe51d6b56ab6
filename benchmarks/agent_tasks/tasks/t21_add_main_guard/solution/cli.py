def main():
    print("running the tool")
    return 0


if __name__ == "__main__":
    main()
