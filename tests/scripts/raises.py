"""Dies of an ordinary uncaught exception, deep in a call chain."""


def load(path):
    with open(path) as fh:
        return fh.read()


def main():
    print("starting")
    return load("/nonexistent/config.yaml")


main()
