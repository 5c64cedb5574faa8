{% set state = 'bcmath' %}
{% include "php/installed.jinja" %}
