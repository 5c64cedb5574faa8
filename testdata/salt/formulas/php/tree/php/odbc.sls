{% set state = 'odbc' %}
{% include "php/installed.jinja" %}
