{# The second iteration names a function that does not exist. #}
{% for i in [1, 2] %}
step{{ i }}:
  runner.test.{{ 'arg' if i == 1 else 'nope' }}: []
{% endfor %}
