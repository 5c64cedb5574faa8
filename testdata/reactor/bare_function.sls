{# Salt's state-compiler form: the function named as a bare list item. #}
uptime:
  local:
    - cmd.run
    - tgt: '*'
    - arg:
      - uptime -p
