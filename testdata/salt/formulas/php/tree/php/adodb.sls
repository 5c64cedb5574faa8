{% set state = 'adodb' %}
{% include "php/installed.jinja" %}
