{% set state = 'tcpdf' %}
{% include "php/installed.jinja" %}
