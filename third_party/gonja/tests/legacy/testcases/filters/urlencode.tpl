{{ "http://www.example.org/foo?a=b&c=d"|urlencode }}
