{% set state = 'xsl' %}
{% include "php/installed.jinja" %}
