{{ 'gonja' }}
{{ '=' * 80 }}
{{ 'concat' ~ simple.str }}
