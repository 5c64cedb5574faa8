{% set state = 'fileinfo' %}
{% include "php/installed.jinja" %}
