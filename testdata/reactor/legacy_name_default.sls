{# No `name:` given: Salt passes the reaction id as name to a function that takes one. #}
{{ data['name'] }}:
  runner.ddns.delete_host:
    - zone: example.com
