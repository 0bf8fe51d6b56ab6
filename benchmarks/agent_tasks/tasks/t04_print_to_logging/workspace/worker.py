def process(items):
    print("processing", len(items), "items")
    done = [item.upper() for item in items]
    print("done")
    return done
