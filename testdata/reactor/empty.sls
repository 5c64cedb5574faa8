{% if data.get('act') == 'never' %}
nothing:
  runner.test.ping: []
{% endif %}
