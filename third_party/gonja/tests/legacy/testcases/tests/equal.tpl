{{ 3 is equalto 3 }}
{{ 3 is eq 3 }}
{{ 3 is == 3 }}
{{ 42 is equalto 3 }}
{{ 42 is eq 3 }}
{{ 42 is == 3 }}
