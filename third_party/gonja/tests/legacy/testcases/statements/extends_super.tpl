{% extends "./inheritance/base.tpl" %}

{% block content %}{{ super() }}extends-level-1{% endblock %}
