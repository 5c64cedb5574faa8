{{ not_found is defined }}
{{ not_found is not defined }}
{{ simple is defined }}
{{ simple is not defined }}
{{ simple.str is defined }}
{{ simple.str is not defined }}
{{ simple.missing is defined }}
{{ simple.missing is not defined }}
