{% set state = 'seclib' %}
{% include "php/installed.jinja" %}
