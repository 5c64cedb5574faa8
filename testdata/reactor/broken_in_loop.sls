{# The second iteration names a function that does not exist. #}
{% for i in [1, 2] %}
step{{ i }}:
  {% if i == 1 %}runner.test.arg{% else %}runner.test.nope{% endif %}: []
{% endfor %}
