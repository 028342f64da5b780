"""Client review URLs: the consultant's pages under /plans/<plan_id>/review/ and
/plans/<plan_id>/checklist/, and the public share-link pages under /s/<token>/."""

from django.urls import path

from planner.sharing import views

app_name = "sharing"

P = "plans/<int:plan_id>/"
R = P + "review/revisions/<int:number>/"

urlpatterns = [
    path(P + "review/", views.review, name="review"),
    path(P + "review/publish/", views.publish, name="publish"),
    path(P + "review/compare/", views.revision_compare, name="compare"),
    path(P + "review/links/", views.link_create, name="link_create"),
    path(P + "review/links/<int:link_id>/", views.link_detail, name="link_detail"),
    path(P + "review/links/<int:link_id>/revoke/", views.link_revoke, name="link_revoke"),
    path(P + "review/links/<int:link_id>/notify/", views.revision_notify, name="revision_notify"),
    path(P + "review/comments/<int:comment_id>/reply/", views.comment_reply, name="comment_reply"),
    path(
        P + "review/comments/<int:comment_id>/resend/",
        views.reply_email_resend,
        name="reply_email_resend",
    ),
    path(
        P + "review/comments/<int:comment_id>/delivery/",
        views.reply_email_status,
        name="reply_email_status",
    ),
    path(R, views.revision_detail, name="revision"),
    path(R + "<str:kind>.pdf", views.document_download, name="document"),
    path(R + "<str:kind>/status/", views.document_status, name="document_status"),
    path(R + "<str:kind>/preview/", views.document_preview, name="document_preview"),
    path(P + "checklist/", views.checklist_view, name="checklist"),
    path("s/forget-address/<str:secret>/", views.contact_forget, name="contact_forget"),
    path("s/<str:token>/", views.public_page, name="public"),
    path("s/<str:token>/comment/", views.public_comment, name="public_comment"),
    path("s/<str:token>/decision/", views.public_decision, name="public_decision"),
    path("s/<str:token>/<str:kind>.pdf", views.public_document, name="public_document"),
    path(
        "s/<str:token>/<str:kind>/status/",
        views.public_document_status,
        name="public_document_status",
    ),
]
