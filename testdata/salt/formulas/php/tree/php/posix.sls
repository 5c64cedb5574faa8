{% set state = 'posix' %}
{% include "php/installed.jinja" %}
