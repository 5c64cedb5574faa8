{{ 'gonja' is lower }}
{{ 'Gonja' is lower }}
{{ 'GONJA' is lower }}
{{ 42 is lower }}
