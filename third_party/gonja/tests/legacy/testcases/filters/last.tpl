{{ "Test"|last }}
{{ (complex.comments | last).Text }}
{{ 5|last }}
{{ true|last }}
{{ nothing|last }}
{{ simple.chinese_hello_world|last }}
