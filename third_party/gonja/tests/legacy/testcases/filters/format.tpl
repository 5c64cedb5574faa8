{{ "%s - %s"|format("Hello?", "Foo!") }}
