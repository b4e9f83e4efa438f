package secrets

import (
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
)

// A generator makes valid random secrets of one provider format, written
// from the provider's documented format independently of the rule's
// pattern, so that the recall test checks one against the other.
type generator struct {
	family, kind string
	// name, when set, is the variable the value is assigned to: formats
	// without a distinctive prefix are recognised by it.
	name string
	// make returns the value to embed and the part of it a finding must
	// cover (the whole value unless the format says otherwise).
	make func(r *rand.Rand) (value, secret string)
}

func gen(family, kind, spec string) generator {
	return generator{family: family, kind: kind, make: whole(shape(spec))}
}

func named(family, kind, name, spec string) generator {
	return generator{family: family, kind: kind, name: name, make: whole(shape(spec))}
}

func genFunc(family, kind string, f func(r *rand.Rand) (string, string)) generator {
	return generator{family: family, kind: kind, make: f}
}

func whole(f func(r *rand.Rand) string) func(r *rand.Rand) (string, string) {
	return func(r *rand.Rand) (string, string) { s := f(r); return s, s }
}

var shapeClasses = map[string]string{
	"d":    "0123456789",
	"h":    "0123456789abcdef",
	"H":    "0123456789ABCDEF",
	"a":    "abcdefghijklmnopqrstuvwxyz",
	"A":    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"l":    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"an":   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"AN":   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"ad":   "abcdefghijklmnopqrstuvwxyz0123456789",
	"b64":  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/",
	"u64":  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
	"b32":  "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
	"bech": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}

// shape reads a format description: literal text with {class:n},
// {class:min-max}, {uuid} and {one:a,b,c} holes.
func shape(spec string) func(r *rand.Rand) string {
	return func(r *rand.Rand) string {
		var b strings.Builder
		rest := spec
		for {
			open := strings.IndexByte(rest, '{')
			if open < 0 {
				b.WriteString(rest)
				return b.String()
			}
			b.WriteString(rest[:open])
			end := strings.IndexByte(rest[open:], '}') + open
			hole := rest[open+1 : end]
			rest = rest[end+1:]
			name, arg, _ := strings.Cut(hole, ":")
			switch name {
			case "uuid":
				h := shape("{h:8}-{h:4}-4{h:3}-{one:8,9,a,b}{h:3}-{h:12}")
				b.WriteString(h(r))
			case "one":
				opts := strings.Split(arg, ",")
				b.WriteString(opts[r.IntN(len(opts))])
			default:
				chars, ok := shapeClasses[name]
				if !ok {
					panic("shape: unknown class " + name + " in " + spec)
				}
				lo, hi, found := strings.Cut(arg, "-")
				n, _ := strconv.Atoi(lo)
				if found {
					m, _ := strconv.Atoi(hi)
					n += r.IntN(m - n + 1)
				}
				for range n {
					b.WriteByte(chars[r.IntN(len(chars))])
				}
			}
		}
	}
}

// githubStyle makes a token in GitHub's format: prefix, 30 random base62
// characters, and their CRC32 in 6 base62 digits.
func githubStyle(prefix string) func(r *rand.Rand) (string, string) {
	return whole(func(r *rand.Rand) string {
		body := shape("{an:30}")(r)
		v := crc32.ChecksumIEEE([]byte(body))
		var sum [6]byte
		for i := 5; i >= 0; i-- {
			sum[i] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[v%62]
			v /= 62
		}
		return prefix + body + string(sum[:])
	})
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// pemBlock makes a private key block of random DER-sized base64 in 64
// character lines; sep is the line break ("\n", or `\n` as typed into an
// .env value); cut leaves the footer and the last lines out.
func pemBlock(r *rand.Rand, label, sep string, cut bool) string {
	body := base64.StdEncoding.EncodeToString(randomBytes(r, 600+r.IntN(600)))
	var b strings.Builder
	b.WriteString("-----BEGIN " + label + "-----" + sep)
	if label == "ENCRYPTED PRIVATE KEY" || label == "RSA PRIVATE KEY" && r.IntN(3) == 0 {
		if label == "RSA PRIVATE KEY" {
			b.WriteString("Proc-Type: 4,ENCRYPTED" + sep + "DEK-Info: AES-128-CBC,1F2E3D4C5B6A79880F1E2D3C4B5A6978" + sep + sep)
		}
	}
	lines := 0
	for len(body) > 0 {
		n := min(64, len(body))
		b.WriteString(body[:n] + sep)
		body = body[n:]
		lines++
		if cut && lines == 8 {
			return strings.TrimSuffix(b.String(), sep)
		}
	}
	b.WriteString("-----END " + label + "-----")
	return b.String()
}

func genPEM(r *rand.Rand) (string, string) {
	label := []string{"RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"}[r.IntN(7)]
	sep := []string{"\n", "\r\n", `\n`}[r.IntN(3)]
	s := pemBlock(r, label, sep, r.IntN(5) == 0)
	return s, s
}

func genPuTTY(r *rand.Rand) (string, string) {
	pub := base64.StdEncoding.EncodeToString(randomBytes(r, 270))
	priv := base64.StdEncoding.EncodeToString(randomBytes(r, 650))
	lines := func(s string) string {
		var out []string
		for len(s) > 0 {
			n := min(64, len(s))
			out = append(out, s[:n])
			s = s[n:]
		}
		return strings.Join(out, "\n")
	}
	s := "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: rsa-key-20250101\nPublic-Lines: 6\n" + lines(pub) +
		"\nPrivate-Lines: 14\n" + lines(priv) + "\nPrivate-MAC: " + shape("{h:64}")(r)
	return s, s
}

func genJWT(r *rand.Rand) (string, string) {
	enc := base64.RawURLEncoding.EncodeToString
	headers := []string{`{"alg":"HS256","typ":"JWT"}`, `{"alg":"RS256","kid":"` + shape("{h:16}")(r) + `","typ":"JWT"}`, `{"typ":"JWT","alg":"ES256"}`}
	header := headers[r.IntN(len(headers))]
	payload := fmt.Sprintf(`{"sub":"%s","iat":%d,"exp":%d,"scope":"read write"}`, shape("{h:12}")(r), 1700000000+r.IntN(1e7), 1800000000+r.IntN(1e7))
	sig := randomBytes(r, []int{32, 64, 256}[r.IntN(3)])
	s := enc([]byte(header)) + "." + enc([]byte(payload)) + "." + enc(sig)
	return s, s
}

func genAzureStorage(r *rand.Rand) (string, string) {
	key := base64.StdEncoding.EncodeToString(randomBytes(r, 64))
	return "DefaultEndpointsProtocol=https;AccountName=" + shape("{a:10}")(r) + ";AccountKey=" + key + ";EndpointSuffix=core.windows.net", key
}

func genAzureSAS(r *rand.Rand) (string, string) {
	sig := url.QueryEscape(base64.StdEncoding.EncodeToString(randomBytes(r, 32)))
	return "https://" + shape("{a:8}")(r) + ".blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&spr=https&sig=" + sig, sig
}

func genDatabaseURL(r *rand.Rand) (string, string) {
	schemes := []string{"postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss", "amqps", "postgresql+psycopg2"}
	scheme := schemes[r.IntN(len(schemes))]
	user := shape("{a:4-8}")(r)
	if scheme == "redis" {
		user = ""
	}
	core := scheme + "://" + user + ":" + shape("{an:12-24}")(r) + "@" + shape("db-{ad:6}.internal")(r)
	return core + "/app?sslmode=require", core
}

func genADO(r *rand.Rand) (string, string) {
	pw := shape("{an:16}")(r)
	return "Server=tcp:" + shape("{a:8}")(r) + ".database.windows.net,1433;Initial Catalog=app;User ID=app;Password=" + pw + ";Encrypt=True;", pw
}

func genJDBC(r *rand.Rand) (string, string) {
	pw := shape("{an:16}")(r)
	return "jdbc:postgresql://db.internal:5432/app?user=app&password=" + pw + "&ssl=true", pw
}

func genURLCredentials(r *rand.Rand) (string, string) {
	core := shape("{one:https,ftp,smtps}://{a:6}:{an:20}@{one:git,files,mail}.{a:8}.io")(r)
	return core + "/org/repo.git", core
}

func genAuthHeader(r *rand.Rand) (string, string) {
	tok := shape("{u64:40}")(r)
	return shape("{one:Authorization,authorization}: {one:Bearer,Token,Basic} ")(r) + tok, tok
}

// generators covers every rule of the table; TestRecall checks that.
var generators = []generator{
	genFunc("pem", "private_key", genPEM),
	genFunc("putty", "private_key", genPuTTY),
	gen("age", "age_secret_key", "AGE-SECRET-KEY-1{bech:58}"),
	genFunc("jwt", "jwt", genJWT),

	gen("aws", "aws_access_key", "{one:AKIA,ASIA}{b32:16}"),
	named("aws", "aws_secret_key", "AWS_SECRET_ACCESS_KEY", "{b64:40}"),
	gen("google", "google_api_key", "AIza{u64:35}"),
	gen("google", "google_oauth_secret", "GOCSPX-{u64:28}"),
	gen("google", "google_oauth_token", "ya29.{u64:150-250}"),
	gen("google", "google_oauth_token", "1//0{u64:60-100}"),
	gen("firebase", "firebase_cloud_messaging_key", "AAAA{u64:7}:APA91b{u64:134}"),
	genFunc("azure", "azure_storage_key", genAzureStorage),
	gen("azure", "azure_client_secret", "{an:3}{d:1}Q~{u64:34}"),
	genFunc("azure", "azure_sas_token", genAzureSAS),
	gen("azure_devops", "azure_devops_token", "{an:52}AZDO{an:4}"),
	gen("alibaba", "alibaba_access_key", "LTAI{an:20}"),
	gen("tencent", "tencent_secret_id", "AKID{an:32}"),
	gen("yandex", "yandex_key", "AQVN{u64:36}"),
	gen("yandex", "yandex_key", "YC{u64:38}"),
	gen("yandex", "yandex_key", "t1.{u64:60}.{u64:86}"),
	named("ibm", "ibm_cloud_key", "IBM_CLOUD_API_KEY", "{u64:44}"),
	gen("digitalocean", "digitalocean_token", "{one:dop,doo,dor}_v1_{h:64}"),
	named("linode", "linode_token", "LINODE_TOKEN", "{h:64}"),
	named("vultr", "vultr_key", "VULTR_API_KEY", "{AN:36}"),
	named("hetzner", "hetzner_token", "HCLOUD_TOKEN", "{an:64}"),
	named("scaleway", "scaleway_key", "SCW_SECRET_KEY", "{uuid}"),
	named("cloudflare", "cloudflare_token", "CLOUDFLARE_API_TOKEN", "{u64:40}"),
	gen("heroku", "heroku_api_key", "HRKU-{u64:60}"),
	named("heroku", "heroku_api_key", "HEROKU_API_KEY", "{uuid}"),
	gen("fly", "fly_token", "FlyV1 fm2_{b64:200-400}"),
	named("vercel", "vercel_token", "VERCEL_TOKEN", "{an:24}"),
	gen("netlify", "netlify_token", "nfp_{an:36}"),
	named("netlify", "netlify_token", "NETLIFY_AUTH_TOKEN", "{u64:43}"),
	gen("render", "render_key", "rnd_{an:32}"),
	gen("supabase", "supabase_key", "sbp_{h:40}"),
	gen("supabase", "supabase_key", "sb_secret_{u64:31}"),
	gen("planetscale", "planetscale_token", "pscale_{one:tkn,pw}_{u64:43}"),
	gen("databricks", "databricks_token", "dapi{h:32}"),
	gen("hashicorp_vault", "vault_token", "{one:hvs,hvb}.{u64:90}"),
	gen("terraform_cloud", "terraform_token", "{an:14}.atlasv1.{u64:67}"),
	gen("pulumi", "pulumi_token", "pul-{h:40}"),
	gen("doppler", "doppler_token", "dp.{one:pt,sa,ct}.{an:43}"),
	gen("doppler", "doppler_token", "dp.st.prd.{an:40}"),
	gen("1password", "onepassword_token", "ops_eyJ{b64:400-800}"),
	gen("1password", "onepassword_secret_key", "A3-{AN:6}-{AN:6}-{AN:5}-{AN:5}-{AN:5}-{AN:5}"),

	genFunc("github", "github_token", githubStyle("ghp_")),
	genFunc("github", "github_token", githubStyle("ghs_")),
	gen("github", "github_token", "github_pat_11{AN:20}_{an:59}"),
	gen("gitlab", "gitlab_token", "{one:glpat,gldt,glrt}-{u64:20}"),
	gen("gitlab", "gitlab_token", "glptt-{h:40}"),
	gen("gitlab", "gitlab_token", "GR1348941{u64:20}"),
	gen("bitbucket", "bitbucket_token", "ATBB{an:32}"),
	gen("atlassian", "atlassian_token", "ATATT3xFfGF0{u64:172}={H:8}"),
	gen("sourcegraph", "sourcegraph_token", "sgp_{h:16}_{h:40}"),
	gen("buildkite", "buildkite_token", "bkua_{h:40}"),
	gen("circleci", "circleci_token", "CCIPAT_{an:22}_{h:40}"),
	gen("sonar", "sonar_token", "{one:squ,sqp,sqa}_{h:40}"),
	gen("jfrog", "jfrog_token", "AKCp{an:69}"),
	gen("jfrog", "jfrog_token", "cmVmdGtuOjAxOj{an:50}"),
	gen("harness", "harness_token", "pat.{u64:22}.{h:24}.{an:20}"),
	gen("octopus_deploy", "octopus_deploy_key", "API-{AN:26}"),
	genFunc("npm", "npm_token", githubStyle("npm_")),
	gen("pypi", "pypi_token", "pypi-AgEIcHlwaS5vcmc{u64:150}"),
	gen("rubygems", "rubygems_key", "rubygems_{h:48}"),
	gen("nuget", "nuget_key", "oy2{ad:43}"),
	gen("docker", "docker_token", "dckr_pat_{u64:27}"),
	gen("crates_io", "crates_token", "cio{an:32}"),
	gen("clojars", "clojars_token", "CLOJARS_{ad:60}"),
	gen("prefect", "prefect_token", "pnu_{an:36}"),
	gen("infracost", "infracost_key", "ico-{an:32}"),
	gen("scalingo", "scalingo_token", "tk-us-{u64:48}"),
	gen("tailscale", "tailscale_key", "tskey-{one:auth,api,client}-k{an:10}CNTRL-{an:32}"),
	gen("defined_networking", "defined_networking_key", "dnkey-{ad:26}-{ad:52}"),
	named("ngrok", "ngrok_token", "NGROK_AUTHTOKEN", "2{an:26}_{an:21}"),

	gen("linear", "linear_key", "lin_api_{an:40}"),
	gen("notion", "notion_token", "secret_{an:43}"),
	gen("notion", "notion_token", "ntn_{d:11}{an:35}"),
	gen("figma", "figma_token", "figd_{u64:40}"),
	gen("airtable", "airtable_token", "pat{an:14}.{h:64}"),
	gen("postman", "postman_key", "PMAK-{h:24}-{h:34}"),
	gen("typeform", "typeform_token", "tfp_{u64:59}"),
	gen("contentful", "contentful_token", "CFPAT-{u64:43}"),
	gen("readme", "readme_key", "rdme_{ad:70}"),
	gen("frameio", "frameio_token", "fio-u-{u64:64}"),
	gen("trello", "trello_token", "ATTA{h:64}{H:8}"),
	named("asana", "asana_token", "ASANA_ACCESS_TOKEN", "1/{d:16}:{h:32}"),
	gen("hubspot", "hubspot_token", "pat-{one:na1,eu1}-{uuid}"),
	gen("salesforce", "salesforce_token", "00D{an:15}!{an:100}"),
	gen("dropbox", "dropbox_token", "sl.{u64:140}"),
	gen("adafruit", "adafruit_key", "aio_{an:28}"),
	gen("mapbox", "mapbox_token", "sk.eyJ{u64:60}.{u64:22}"),
	named("algolia", "algolia_key", "ALGOLIA_ADMIN_KEY", "{h:32}"),
	gen("cloudinary", "cloudinary_url", "cloudinary://{d:15}:{u64:27}@{ad:8}"),

	gen("dynatrace", "dynatrace_token", "dt0c01.{AN:24}.{AN:64}"),
	gen("newrelic", "newrelic_key", "NRAK-{AN:27}"),
	gen("newrelic", "newrelic_key", "NRII-{u64:32}"),
	gen("newrelic", "newrelic_key", "{h:36}NRAL"),
	gen("sentry", "sentry_token", "sntryu_{h:64}"),
	gen("sentry", "sentry_token", "sntrys_eyJ{b64:150}"),
	gen("grafana", "grafana_token", "glc_{b64:100}"),
	gen("grafana", "grafana_token", "glsa_{an:32}_{h:8}"),
	named("datadog", "datadog_key", "DD_API_KEY", "{h:32}"),
	named("datadog", "datadog_key", "DATADOG_APP_KEY", "{h:40}"),
	gen("honeybadger", "honeybadger_token", "hbp_{an:36}"),
	gen("posthog", "posthog_key", "phx_{an:43}"),
	named("rollbar", "rollbar_token", "ROLLBAR_ACCESS_TOKEN", "{h:32}"),
	named("bugsnag", "bugsnag_key", "BUGSNAG_API_KEY", "{h:32}"),

	gen("slack", "slack_token", "xoxb-{d:12}-{d:13}-{an:24}"),
	gen("slack", "slack_token", "xoxp-{d:12}-{d:12}-{d:13}-{h:32}"),
	gen("slack", "slack_token", "xoxe.xoxp-1-{an:160}"),
	gen("slack", "slack_token", "xapp-1-{AN:11}-{d:13}-{h:64}"),
	gen("slack", "slack_webhook", "https://hooks.slack.com/services/T{AN:9}/B{AN:9}/{an:24}"),
	gen("discord", "discord_webhook", "https://discord.com/api/webhooks/{d:18}/{u64:68}"),
	named("discord", "discord_bot_token", "DISCORD_BOT_TOKEN", "{one:M,N}{u64:25}.{u64:6}.{u64:38}"),
	gen("microsoft_teams", "teams_webhook", "https://{a:7}.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{an:32}/{uuid}"),
	gen("zapier", "zapier_webhook", "https://hooks.zapier.com/hooks/catch/{d:8}/{ad:7}/"),
	gen("telegram", "telegram_bot_token", "{d:10}:AA{u64:33}"),
	gen("twilio", "twilio_key", "SK{h:32}"),
	named("twilio", "twilio_key", "TWILIO_AUTH_TOKEN", "{h:32}"),
	gen("sendgrid", "sendgrid_key", "SG.{u64:22}.{u64:43}"),
	named("mailgun", "mailgun_key", "MAILGUN_API_KEY", "key-{h:32}"),
	gen("mailchimp", "mailchimp_key", "{h:32}-us{d:2}"),
	gen("brevo", "brevo_key", "xkeysib-{h:64}-{an:16}"),
	named("postmark", "postmark_token", "POSTMARK_SERVER_TOKEN", "{uuid}"),
	named("sparkpost", "sparkpost_key", "SPARKPOST_API_KEY", "{h:40}"),
	gen("resend", "resend_key", "re_{an:8}_{an:24}"),
	named("mandrill", "mandrill_key", "MANDRILL_API_KEY", "{u64:22}"),
	gen("facebook", "facebook_token", "EAACEdEose0cBA{an:150}"),
	named("facebook", "facebook_token", "FACEBOOK_APP_SECRET", "{h:32}"),
	gen("twitter", "twitter_token", "AAAAAAAAAAAAAAAAAAAAA{an:10}AAAAAAAA{an:20}%2B{an:10}%3D{an:50}"),
	named("twitch", "twitch_token", "TWITCH_OAUTH_TOKEN", "{ad:30}"),
	named("spotify", "spotify_secret", "SPOTIFY_CLIENT_SECRET", "{h:32}"),

	gen("stripe", "stripe_key", "{one:sk,rk}_{one:live,test}_{an:99}"),
	gen("stripe", "stripe_key", "sk_live_{an:24}"),
	gen("stripe", "stripe_key", "whsec_{an:32}"),
	gen("square", "square_token", "EAAA{u64:60}"),
	gen("square", "square_token", "sq0csp-{u64:43}"),
	gen("braintree", "braintree_token", "access_token$production${ad:16}${h:32}"),
	gen("plaid", "plaid_token", "access-production-{uuid}"),
	named("plaid", "plaid_token", "PLAID_SECRET", "{h:30}"),
	gen("flutterwave", "flutterwave_key", "FLWSECK-{h:32}-X"),
	gen("shippo", "shippo_token", "shippo_live_{h:40}"),
	gen("easypost", "easypost_key", "EZAK{an:54}"),
	gen("duffel", "duffel_token", "duffel_live_{u64:43}"),
	gen("klaviyo", "klaviyo_key", "pk_{h:34}"),
	gen("shopify", "shopify_token", "{one:shpat,shpca,shppa,shpss}_{h:32}"),

	named("okta", "okta_token", "OKTA_API_TOKEN", "00{u64:40}"),
	named("auth0", "auth0_secret", "AUTH0_CLIENT_SECRET", "{u64:64}"),

	gen("anthropic", "anthropic_key", "sk-ant-{one:api03,admin01}-{u64:93}AA"),
	gen("openrouter", "openrouter_key", "sk-or-v1-{h:64}"),
	gen("openai", "openai_key", "sk-{one:proj,svcacct}-{u64:74}T3BlbkFJ{u64:74}"),
	gen("openai", "openai_key", "sk-{an:20}T3BlbkFJ{an:20}"),
	named("deepseek", "deepseek_key", "DEEPSEEK_API_KEY", "sk-{h:32}"),
	gen("groq", "groq_key", "gsk_{an:52}"),
	gen("perplexity", "perplexity_key", "pplx-{an:48}"),
	gen("xai", "xai_key", "xai-{an:80}"),
	gen("huggingface", "huggingface_token", "hf_{l:34}"),
	gen("replicate", "replicate_token", "r8_{an:37}"),
	gen("langsmith", "langsmith_key", "lsv2_{one:pt,sk}_{h:32}_{h:10}"),
	gen("pinecone", "pinecone_key", "pcsk_{an:5}_{an:64}"),
	gen("tavily", "tavily_key", "tvly-{one:dev-,}{an:32}"),
	gen("firecrawl", "firecrawl_key", "fc-{h:32}"),
	gen("jina", "jina_key", "jina_{u64:64}"),
	gen("together", "together_key", "tgp_v1_{u64:43}"),
	gen("elevenlabs", "elevenlabs_key", "sk_{h:48}"),
	gen("browserbase", "browserbase_key", "bb_live_{u64:27}"),
	named("cohere", "cohere_key", "COHERE_API_KEY", "{an:40}"),
	named("mistral", "mistral_key", "MISTRAL_API_KEY", "{an:32}"),
	named("wandb", "wandb_key", "WANDB_API_KEY", "{h:40}"),
	named("assemblyai", "assemblyai_key", "ASSEMBLYAI_API_KEY", "{h:32}"),
	named("deepgram", "deepgram_key", "DEEPGRAM_API_KEY", "{h:40}"),

	genFunc("database", "db_connection_string", genDatabaseURL),
	genFunc("database", "db_connection_string", genADO),
	genFunc("database", "db_connection_string", genJDBC),
	genFunc("url_basic_auth", "url_credentials", genURLCredentials),
	genFunc("http_authorization", "http_auth_header", genAuthHeader),
	named("http_authorization", "http_auth_header", "X-Api-Key", "{an:32}"),
}

// freeTemplates embed a value in the places tool results carry secrets:
// JSON text content, env files, log lines, YAML, code, tables.
var freeTemplates = []string{
	`{"type":"text","text":"Found credentials in config: %s (rotate soon)"}`,
	"export API_TOKEN=%s\nexport REGION=eu-west-1",
	"2025-03-14T09:26:53.589Z INFO  client configured token=%s retries=3",
	"settings:\n  token: \"%s\"\n  timeout: 30s",
	`client = Client(api_key="%s", timeout=10)`,
	"| prod | %s | active |",
	"curl -H 'X-Token: %s' https://api.internal/v1/items",
}

// namedTemplates assign a value to a name (%[1]s upper case, %[2]s lower
// case, %[3]s the value).
var namedTemplates = []string{
	"%[1]s=%[3]s\nLOG_LEVEL=debug",
	"export %[1]s=\"%[3]s\"",
	`{"%[2]s": "%[3]s", "region": "us-east-1"}`,
	"config:\n  %[2]s: %[3]s\n  retries: 3",
	"os.environ['%[1]s'] = '%[3]s'",
}

// sample embeds one generated secret; secretStart is where the part a
// finding must cover begins.
func (g generator) sample(r *rand.Rand) (text, secret string, secretStart int) {
	value, secret := g.make(r)
	var t string
	if g.name == "" {
		t = fmt.Sprintf(freeTemplates[r.IntN(len(freeTemplates))], value)
	} else {
		t = fmt.Sprintf(namedTemplates[r.IntN(len(namedTemplates))], g.name, strings.ToLower(g.name), value)
	}
	at := strings.Index(t, value)
	return t, secret, at + strings.Index(value, secret)
}
