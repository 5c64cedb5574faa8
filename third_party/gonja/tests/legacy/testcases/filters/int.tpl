{{ "foobar"|int }}
{{ nothing|int }}
{{ "5.4"|float|int }}
{{ "5.5"|float|int }}
{{ "5.6"|float|int }}
{{ 6|float|int }}
{{ -100|int }}
