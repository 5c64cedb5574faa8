{% set state = 'ldap' %}
{% include "php/installed.jinja" %}
