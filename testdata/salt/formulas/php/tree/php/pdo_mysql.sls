{% set state = 'pdo_mysql' %}
{% include "php/installed.jinja" %}
