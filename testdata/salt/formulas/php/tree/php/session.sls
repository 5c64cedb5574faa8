{% set state = 'session' %}
{% include "php/installed.jinja" %}
