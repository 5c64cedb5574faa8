{% set state = 'cgi' %}
{% include "php/installed.jinja" %}
