// A small matching engine in Java, for `subsum conform matching` (README, "Your own engine").
//
//   javac -d build SubsumMatcher.java
//   java -cp build SubsumMatcher SUBSCRIPTIONS EVENTS     one workload (one-shot mode)
//   java -cp build SubsumMatcher --serve                  one request line per workload (--persistent)
//
// It reads the files of spec/formats.md and prints one result line per event:
// {"event": ID, "subscriptions": [IDs sorted]}. In serve mode each request line is
// {"subscriptions": PATH, "events": PATH} and each answer ends with an empty line.
//
// Deliberate gaps, declared to the kit with `--unsupported wildcard,filter-text`:
// it has no wildcard operator, and it reads only the `constraints` form of a
// subscription, not `filter` text. On either it says so on standard error and exits 2.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

public final class SubsumMatcher {

    record Constraint(String name, String type, String op, Object value) {}

    record Subscription(String id, List<Constraint> constraints) {}

    record Value(String type, Object value) {}

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("--serve")) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String request = in.readLine(); request != null; request = in.readLine()) {
                Map<?, ?> paths = (Map<?, ?>) new Json(request).parse();
                StringBuilder out = new StringBuilder();
                answer((String) paths.get("subscriptions"), (String) paths.get("events"), out);
                System.out.print(out.append('\n'));
                System.out.flush();
            }
        } else if (args.length == 2) {
            StringBuilder out = new StringBuilder();
            answer(args[0], args[1], out);
            System.out.print(out);
            System.out.flush();
        } else {
            System.err.println("usage: SubsumMatcher SUBSCRIPTIONS EVENTS | SubsumMatcher --serve");
            System.exit(2);
        }
    }

    static void answer(String subscriptionsPath, String eventsPath, StringBuilder out) throws IOException {
        List<Subscription> subscriptions = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(subscriptionsPath), StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                subscriptions.add(subscription((Map<?, ?>) new Json(line).parse()));
            }
        }
        for (String line : Files.readAllLines(Path.of(eventsPath), StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            Map<?, ?> event = (Map<?, ?>) new Json(line).parse();
            Map<String, Value> attributes = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) event.get("attributes")).entrySet()) {
                attributes.put((String) e.getKey(), value(e.getValue()));
            }
            TreeSet<String> matched = new TreeSet<>();
            for (Subscription s : subscriptions) {
                if (s.constraints().stream().allMatch(c -> holds(c, attributes.get(c.name())))) {
                    matched.add(s.id());
                }
            }
            out.append("{\"event\": ").append(Json.quote((String) event.get("id"))).append(", \"subscriptions\": [");
            String comma = "";
            for (String id : matched) {
                out.append(comma).append(Json.quote(id));
                comma = ", ";
            }
            out.append("]}\n");
        }
    }

    static Subscription subscription(Map<?, ?> line) {
        if (!line.containsKey("constraints")) {
            unsupported("a subscription written as filter text (declare --unsupported filter-text)");
        }
        List<Constraint> constraints = new ArrayList<>();
        for (Object item : (List<?>) line.get("constraints")) {
            Map<?, ?> c = (Map<?, ?>) item;
            String type = (String) c.get("type");
            String op = (String) c.get("op");
            if (op.equals("wildcard")) {
                unsupported("the wildcard operator (declare --unsupported wildcard)");
            }
            Object v = c.get("value");
            constraints.add(new Constraint((String) c.get("name"), type, op, type.equals("float") && v instanceof Long l ? (Object) l.doubleValue() : v));
        }
        return new Subscription((String) line.get("id"), constraints);
    }

    static Value value(Object json) {
        if (json instanceof Map<?, ?> typed) {  // {"type": "float", "value": 8}
            Object v = typed.get("value");
            return new Value((String) typed.get("type"), typed.get("type").equals("float") && v instanceof Long l ? (Object) l.doubleValue() : v);
        }
        if (json instanceof Long) {
            return new Value("int", json);
        }
        if (json instanceof Double) {
            return new Value("float", json);
        }
        return new Value(json instanceof Boolean ? "bool" : "string", json);
    }

    static boolean holds(Constraint c, Value a) {
        if (a == null || !a.type().equals(c.type())) {
            return false;  // a constraint needs its attribute, of its own type
        }
        switch (c.op()) {
            case "any": return true;
            case "=": return compare(a.value(), c.value()) == 0;
            case "!=": return compare(a.value(), c.value()) != 0;
            case "<": return compare(a.value(), c.value()) < 0;
            case "<=": return compare(a.value(), c.value()) <= 0;
            case ">": return compare(a.value(), c.value()) > 0;
            case ">=": return compare(a.value(), c.value()) >= 0;
            case "prefix": return ((String) a.value()).startsWith((String) c.value());
            case "suffix": return ((String) a.value()).endsWith((String) c.value());
            case "contains": return ((String) a.value()).contains((String) c.value());
            default: throw new IllegalArgumentException("unknown operator " + c.op());
        }
    }

    static int compare(Object a, Object b) {
        if (a instanceof Long x) {
            return Long.compare(x, (Long) b);
        }
        if (a instanceof Double x) {
            double y = (Double) b;
            return x < y ? -1 : x > y ? 1 : 0;  // so that -0.0 equals 0.0
        }
        return a.equals(b) ? 0 : 1;  // strings and bools: equal or not
    }

    static void unsupported(String what) {
        System.err.println("SubsumMatcher: not supported: " + what);
        System.exit(2);
    }
}
