{% set state = 'ctype' %}
{% include "php/installed.jinja" %}
