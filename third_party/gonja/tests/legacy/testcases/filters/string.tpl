{{ "test"|string is string }}
{{ 42|string is string }}
{{ [1, 2, 3]|string is string }}
{{ {'key': 'value'}|string is string }}
