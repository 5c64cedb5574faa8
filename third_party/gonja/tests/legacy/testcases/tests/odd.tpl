{{ 2 is odd }}
{{ 1 is odd }}
{{ 0 is odd }}
{{ 2.0 is odd }}
{{ 2.1 is odd }}
{{ 'test' is odd }}
