{# salt[...] calls read-only registry functions while rendering. #}
{% set pong = salt['test.ping']() %}
{% if pong %}
lookup:
  runner.test.arg:
    - kwarg:
        echoed: {{ salt['test.arg']('a', k=data['id'])['kwargs']['k'] }}
{% endif %}
