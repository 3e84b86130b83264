package wire

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
)

// SlackParams reads a Slack Web API call's parameters from a form
// (urlencoded or multipart) or a JSON body, and the query, and its token
// from the Authorization header or the token parameter, which it takes
// out of params. It reads r.Body. The Slack mock answers from them, and
// the proxy's reply events say what a reply posted.
func SlackParams(r *http.Request) (map[string]string, string, error) {
	p := map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && err != io.EOF {
			return nil, "", err
		}
		for k, v := range body {
			switch v := v.(type) {
			case string:
				p[k] = v
			default:
				b, _ := json.Marshal(v)
				p[k] = string(b)
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			return nil, "", err
		}
		for k, v := range r.MultipartForm.Value {
			p[k] = v[0]
		}
	default:
		if err := r.ParseForm(); err != nil {
			return nil, "", err
		}
		for k, v := range r.Form {
			p[k] = v[0]
		}
	}
	for k, v := range r.URL.Query() {
		if _, ok := p[k]; !ok {
			p[k] = v[0]
		}
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = p["token"]
	}
	delete(p, "token")
	return p, token, nil
}
