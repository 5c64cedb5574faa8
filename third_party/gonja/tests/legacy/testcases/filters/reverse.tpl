{{ [0, 1, 2, 3, 4, 5]|reverse }}
{{ "abcd"|reverse }}
{{ {"key": "value", "other": 42}|reverse }}
{{ simple.casedStrmap|reverse }}
