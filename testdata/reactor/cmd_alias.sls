{# cmd.* is Salt's pre-2014.7 name for local.*; expr_form is the pre-2017.7 tgt_type. #}
highstate_new_minion:
  cmd.state.apply:
    - tgt: {{ data['id'] }}
    - expr_form: list
    - arg:
      - webserver
