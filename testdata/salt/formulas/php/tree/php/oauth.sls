{% set state = 'oauth' %}
{% include "php/installed.jinja" %}
