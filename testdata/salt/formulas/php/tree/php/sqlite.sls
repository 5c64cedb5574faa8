{% set state = 'sqlite' %}
{% include "php/installed.jinja" %}
