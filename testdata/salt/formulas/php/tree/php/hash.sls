{% set state = 'hash' %}
{% include "php/installed.jinja" %}
