{{ "<script>"|forceescape }}
{{ "<script>"|safe|forceescape }}
